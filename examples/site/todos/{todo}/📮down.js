// Moves the item below the one after it (between the two items below it, or last).
import {Todo} from '📦';
import {todo} from '🔗';

const t = todo.get();
const next = Todo.hierarchy_gt(t.hierarchy).asc().optional();
if (next != null) {
  const afterThat = Todo.hierarchy_gt(next.hierarchy).asc().optional();
  t.hierarchy = afterThat == null ? next.hierarchy.next() : next.hierarchy.before(afterThat.hierarchy);
}
Redirect.dir('todos');
