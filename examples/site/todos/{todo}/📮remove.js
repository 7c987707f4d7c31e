import {todo} from '🔗';

todo.get().remove();
Redirect.dir('todos');
