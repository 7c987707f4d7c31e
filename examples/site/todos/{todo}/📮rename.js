import {todo} from '🔗';
import {title} from 'form';

let answer = Redirect.dir('todos');
try {
  todo.get().title = title;
} catch ($ModelInvalid) {
  answer = Redirect.dir('todos').invalid($ModelInvalid);
}
answer;
