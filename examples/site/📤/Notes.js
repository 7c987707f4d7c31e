// A request supplier: its exports are visible to every view and script of the app.
import {tag} from '&'

const AllNotes = [
  { id: 'routing', title: 'Files are routes', tags: ['basics'], body: 'The path of a file decides its URL.' },
  { id: 'private', title: 'Private files', tags: ['basics', 'security'], body: 'Names starting with _ are never served.' },
  { id: 'views', title: 'Mustache views', tags: ['views'], body: 'HTML comes only from Mustache templates.' },
  { id: 'scripts', title: 'Scripts', tags: ['scripts', 'security'], body: 'Server logic runs in a checked JavaScript subset.' },
]
const Notes = tag ? AllNotes.filter((n) => n.tags.includes(tag)) : AllNotes
const NoteCount = Notes.length
const Tag = tag

export {AllNotes, Notes, NoteCount, Tag}
