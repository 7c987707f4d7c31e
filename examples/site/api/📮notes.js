// POST /api/notes: a form post. A real app would store the note; this one checks the input
// and redirects (or, for fetch() with X-Requested-With, answers the GET of the target directly).
import {title} from 'form'

if (!title) {
  throw ({ error: 'A title is required', field: 'title' })
}
Redirect.dir('notes').params({ tag: 'basics' }).success('Saved ' + title)
