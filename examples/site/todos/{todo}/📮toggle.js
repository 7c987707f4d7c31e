import {todo} from '🔗';

const t = todo.get();
t.done = !t.done;
Redirect.dir('todos');
