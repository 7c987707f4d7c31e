// POST /notes: the form of /notes/ posts here, with its form state in ?_form=.
import {Note} from '📦';
import {NewNote} from '📤';

const note = new Note();
try {
  NewNote.submit(note);
  Redirect.dir('notes').success('Added the note "' + note.title + '"');
} catch ($ModelInvalid) {
  // Nothing is stored: back to the form, which shows what was typed and why it was refused.
  Redirect.dir('notes').invalid($ModelInvalid);
}
