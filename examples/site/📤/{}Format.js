// A function supplier: pure helpers shared by scripts.
const summary = (note) => note.title + ': ' + note.body

export {summary}
