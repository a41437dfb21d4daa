// A test run's error as a lint diagnostic at its line (pure): the sandbox reports 1-based
// `line`/`column` in the submitted code (crates/sandbox ExecError), which is exactly the
// editor's text. The mark covers from the column to the end of the line (the whole line
// without a column); an error without a position marks the first line.

/** {from, to, severity, message, line} for `error` in `doc` (a string), or null. */
export function diagnosticOf(error, doc) {
  if (!error) return null;
  const lines = String(doc).split('\n');
  const lineNo = Number.isInteger(error.line) && error.line >= 1 ? Math.min(error.line, lines.length) : 1;
  let start = 0;
  for (let i = 0; i < lineNo - 1; i++) start += lines[i].length + 1;
  const text = lines[lineNo - 1] ?? '';
  const col = Number.isInteger(error.column) && error.column >= 1 ? Math.min(error.column - 1, text.length) : 0;
  let from = start + col;
  let to = start + text.length;
  if (to <= from) {
    // A mark needs a width: the character before the end of the line, or the line break.
    from = Math.max(start, to - 1);
    to = Math.max(from + 1, to);
    if (to > doc.length) { to = doc.length; from = Math.max(0, Math.min(from, to - 1)); }
  }
  const kind = error.kind ? `${error.kind} error` : 'error';
  return { from, to, severity: 'error', message: `${kind}: ${error.message ?? 'failed'}`, line: lineNo };
}
