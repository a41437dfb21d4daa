// What the code editor completes (pure): after `sdk.` the data sources of the registry
// (`GET /api/sdk/sources`), after `sdk.<source>.` that source's methods with their parameters,
// after `utils.` the sandbox helpers (sandbox/utils-spec.json, bundled), after `vars.` the
// dashboard's variables. `completionsBefore(text, ctx)` looks at the text before the cursor and
// answers {from, options: [{label, type, detail, info, apply?}]} (`from` is an offset into
// `text`) or null; code.js turns that into CodeMirror's CompletionResult.

/** `getKline({symbol, timeframe?, limit?})`: a method's call shape; params with a default are optional. */
export function signature(method) {
  const params = Array.isArray(method?.params) ? method.params : [];
  const names = params.map((p) => (p.required === true || (p.default === undefined && p.required !== false) ? p.name : `${p.name}?`));
  return `${method?.name ?? ''}(${names.length ? `{ ${names.join(', ')} }` : ''})`;
}

/** One method parameter as a line of the info box. */
function paramLine(p) {
  const bits = [p.type, p.enum ? `one of ${p.enum.join(', ')}` : '', p.default !== undefined ? `default ${JSON.stringify(p.default)}` : '']
    .filter(Boolean).join(', ');
  return `${p.name}: ${bits}${p.description ? ` — ${p.description}` : ''}`;
}

/**
 * Completions for the text before the cursor. `ctx`: {sources: registry.sources, utils:
 * [{name, signature, description}], variables: [{name, label}]}.
 */
export function completionsBefore(text, ctx) {
  const sources = ctx?.sources ?? [];
  let m = /(?:^|[^\w$.])sdk\.([A-Za-z_$][\w$]*)\.([\w$]*)$/.exec(text);
  if (m) {
    const source = sources.find((s) => s.name === m[1]);
    if (!source) return null;
    return {
      from: text.length - m[2].length,
      options: (source.methods ?? []).map((method) => ({
        label: method.name,
        type: 'method',
        detail: signature(method).slice(method.name.length),
        info: [method.description ?? '', ...(method.params ?? []).map(paramLine)].filter(Boolean).join('\n'),
      })),
    };
  }
  m = /(?:^|[^\w$.])sdk\.([\w$]*)$/.exec(text);
  if (m) {
    return {
      from: text.length - m[1].length,
      options: sources.map((s) => ({
        label: s.name,
        type: 'namespace',
        detail: s.displayName ?? '',
        info: s.description ?? '',
      })),
    };
  }
  m = /(?:^|[^\w$.])utils\.([\w$]*)$/.exec(text);
  if (m) {
    return {
      from: text.length - m[1].length,
      options: (ctx?.utils ?? []).map((u) => ({
        label: u.name,
        type: 'function',
        detail: String(u.signature ?? '').replace(/^[\w$]+/, ''),
        info: u.description ?? '',
      })),
    };
  }
  m = /(?:^|[^\w$.])vars\.([\w$]*)$/.exec(text);
  if (m) {
    return {
      from: text.length - m[1].length,
      options: (ctx?.variables ?? []).map((v) => ({ label: v.name, type: 'variable', detail: v.label ?? '' })),
    };
  }
  m = /(?:^|[^\w$.])([\w$]+)$/.exec(text);
  if (m && m[1].length >= 1) {
    // A bare word: the objects panel code has in scope.
    const words = ['sdk', 'utils', 'vars'].filter((w) => w.startsWith(m[1]) && w !== m[1]);
    if (words.length) return { from: text.length - m[1].length, options: words.map((w) => ({ label: w, type: 'variable' })), bare: true };
  }
  return null;
}
