// GET /todos/json: the list as JSON, in the list's order.
import {Todo} from '📦';

Todo.all().map((t) => ({id: t.id, title: t.title, done: t.done}));
