// An endpoint-specific supplier: its name matches the page {note}.html, so only that page sees it.
import {note} from '🔗'
import {AllNotes} from '📤'

const Note = AllNotes.find((n) => n.id == note.$value)

export {Note}
