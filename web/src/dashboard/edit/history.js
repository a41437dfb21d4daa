// Undo and redo over the analyst's own edits (pure). Each edit saved here is recorded with the
// state before and after it and the version its save made. Undoing saves the state before as a
// new version, redoing saves the state after: history only moves forward on the server. A step
// is only taken while the dashboard is still at the version our last step made; if anyone else
// (another tab, the agent, a colleague) saved since, `undo`/`redo` answer `changed` and the
// caller says so instead of overwriting their work.

export function createHistory(limit = 100) {
  /** @type {{before: object, after: object, label: string}[]} */
  let done = [];
  let undone = [];
  /** The version our last step (edit, undo or redo) made. */
  let at = null;

  return {
    get canUndo() { return done.length > 0; },
    get canRedo() { return undone.length > 0; },
    /** The label of the step Undo would take back, or null. */
    get undoLabel() { return done.at(-1)?.label ?? null; },
    get redoLabel() { return undone.at(-1)?.label ?? null; },

    /** An own edit was saved as `version`: it can be undone; anything undone is gone for redo. */
    record(before, after, version, label = 'edit') {
      done.push({ before, after, label });
      if (done.length > limit) done = done.slice(-limit);
      undone = [];
      at = version;
    },

    /**
     * What Undo would save, if the dashboard is still at `currentVersion` as we left it:
     * {ok: true, state, baseVersion, label} | {ok: false, reason: 'empty'|'changed', label?}.
     */
    undo(currentVersion) {
      const e = done.at(-1);
      if (!e) return { ok: false, reason: 'empty' };
      if (at !== currentVersion) return { ok: false, reason: 'changed', label: e.label };
      return { ok: true, state: e.before, baseVersion: currentVersion, label: e.label };
    },

    /** The undo was saved as `version`: the step moves to the redo stack. */
    undone(version) {
      const e = done.pop();
      if (e) undone.push(e);
      at = version;
    },

    /** What Redo would save (see undo). */
    redo(currentVersion) {
      const e = undone.at(-1);
      if (!e) return { ok: false, reason: 'empty' };
      if (at !== currentVersion) return { ok: false, reason: 'changed', label: e.label };
      return { ok: true, state: e.after, baseVersion: currentVersion, label: e.label };
    },

    /** The redo was saved as `version`: the step can be undone again. */
    redone(version) {
      const e = undone.pop();
      if (e) done.push(e);
      at = version;
    },

    clear() {
      done = [];
      undone = [];
      at = null;
    },
  };
}
