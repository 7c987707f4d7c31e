// Moves the item above the one before it (between the two items above it, or first).
import {Todo} from '📦';
import {todo} from '🔗';

const t = todo.get();
const previous = Todo.hierarchy_lt(t.hierarchy).desc().optional();
if (previous != null) {
  const beforeThat = Todo.hierarchy_lt(previous.hierarchy).desc().optional();
  t.hierarchy = beforeThat == null ? previous.hierarchy.previous() : beforeThat.hierarchy.before(previous.hierarchy);
}
Redirect.dir('todos');
