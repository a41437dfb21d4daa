// The panel code editor: CodeMirror 6 with JavaScript highlighting (colours from edit.css's
// variables, so both themes read well), completion of `sdk.`/`utils.`/`vars.` names
// (complete.js) next to the language's own, and a test run's error shown as a lint diagnostic
// at its line (lint.js) with a gutter marker. Mod-Enter runs the code. CodeMirror keeps its own
// undo history for typing; the dashboard's Undo/Redo never sees keystrokes.
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { Prec } from '@codemirror/state';
import { javascript, javascriptLanguage } from '@codemirror/lang-javascript';
import { setDiagnostics, lintGutter } from '@codemirror/lint';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { completionsBefore } from './complete.js';
import { diagnosticOf } from './lint.js';

const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.definitionKeyword, t.moduleKeyword], color: 'var(--cm-keyword)' },
  { tag: [t.string, t.special(t.string), t.regexp], color: 'var(--cm-string)' },
  { tag: [t.number, t.bool, t.null, t.atom], color: 'var(--cm-number)' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--cm-comment)', fontStyle: 'italic' },
  { tag: [t.function(t.variableName), t.function(t.propertyName)], color: 'var(--cm-function)' },
  { tag: [t.propertyName], color: 'var(--cm-property)' },
  { tag: [t.definition(t.variableName)], color: 'var(--cm-definition)' },
  { tag: [t.invalid], color: 'var(--down)' },
]);

const theme = EditorView.theme({
  '&': { color: 'var(--text)', backgroundColor: 'var(--code-bg)', fontSize: '12.5px', height: '100%' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--raised)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 6%, transparent)' },
  '.cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 10%, transparent)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'color-mix(in srgb, var(--accent) 25%, transparent)',
  },
  '&.cm-focused': { outline: '2px solid color-mix(in srgb, var(--accent) 45%, transparent)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel-bg)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-tooltip-autocomplete > ul > li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-text)' },
  '.cm-completionDetail': { color: 'var(--muted)', fontStyle: 'normal', marginLeft: '.6em' },
  '.cm-completionInfo': { maxWidth: '380px', whiteSpace: 'pre-wrap', fontSize: '12px' },
});

/**
 * Mounts an editor in `parent`. `context()` gives the completion context (complete.js);
 * `onChange(text)` runs on every edit, `onRun()` on Mod-Enter. Returns {view, value(),
 * setError(error|null), focus(), destroy()}.
 */
export function createCodeEditor(parent, { doc = '', context, onChange, onRun, label = 'Panel code' }) {
  const source = (cx) => {
    const line = cx.state.doc.lineAt(cx.pos);
    const r = completionsBefore(line.text.slice(0, cx.pos - line.from), context?.());
    if (!r || (r.bare && !cx.explicit && cx.pos - line.from - r.from < 2)) return null;
    return { from: line.from + r.from, options: r.options, validFor: /^[\w$]*$/ };
  };
  const view = new EditorView({
    doc,
    parent,
    extensions: [
      basicSetup,
      javascript(),
      javascriptLanguage.data.of({ autocomplete: source }),
      syntaxHighlighting(highlight),
      lintGutter(),
      theme,
      Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { onRun?.(); return true; } }])),
      EditorView.contentAttributes.of({ 'aria-label': label }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) onChange?.(u.state.doc.toString());
      }),
    ],
  });
  return {
    view,
    value: () => view.state.doc.toString(),
    /** Shows `error` (a test run's `{kind, message, line, column}`) at its line, or clears. */
    setError(error) {
      const d = diagnosticOf(error, view.state.doc.toString());
      view.dispatch(setDiagnostics(view.state, d ? [{ from: d.from, to: d.to, severity: d.severity, message: d.message }] : []));
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
