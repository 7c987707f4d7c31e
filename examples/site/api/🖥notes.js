// GET /api/notes[?tag=x]: the notes as JSON. The last expression is the response.
import {Notes, NoteCount, Tag} from '📤'
import {summary} from '📤'

const list = Notes.map((n) => ({ id: n.id, title: n.title, summary: summary(n) }));

({ tag: Tag, count: NoteCount, notes: list })
