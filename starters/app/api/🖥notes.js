// GET /api/notes: the notes as JSON, newest first. The script's last expression is its answer.
import {Note} from '📦';

const notes = Note.all().desc().map((n) => ({id: n.id, title: n.title, details: n.details, created: n.created}));
({count: Note.all().count(), notes: notes});
