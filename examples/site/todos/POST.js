// POST /todos/ (the form above the list): a new item, last in the list.
import {Todo} from '📦';
import {title} from 'form';

let answer = Redirect.dir('todos');
try {
  new Todo().title(title);
} catch ($ModelInvalid) {
  // Nothing is written: the redirect is marked as failed, so the request is rolled back.
  answer = Redirect.dir('todos').invalid($ModelInvalid);
}
answer;
