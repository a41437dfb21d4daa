// The variables form's model (pure): a dashboard's `variables` as editable rows of text and
// back, with the server's rules checked before saving (crates/dashboard/src/validate.rs,
// check_variable) so the form can point at the field: a name is an identifier and unique; a
// select has options and its default is one of them; a range has options min, max(, step) and
// a default within them; a text variable's default is a string.

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const VAR_TYPES = ['select', 'text', 'range'];

/** Rows for the form: {name, label, type, options (text), default (text), numeric}. */
export function toRows(variables) {
  return (variables ?? []).map((v) => {
    const options = Array.isArray(v.options) ? v.options : [];
    return {
      name: v.name ?? '',
      label: v.label ?? '',
      type: VAR_TYPES.includes(v.type) ? v.type : 'text',
      options: options.map((o) => String(o)).join(', '),
      default: v.default == null ? '' : String(v.default),
      // A select whose choices are numbers keeps them numbers.
      numeric: v.type === 'range' || (options.length > 0 && options.every((o) => typeof o === 'number')),
    };
  });
}

/** A new row with a name not yet taken. */
export function newRow(rows) {
  let n = rows.length + 1;
  while (rows.some((r) => r.name === `var${n}`)) n += 1;
  return { name: `var${n}`, label: `Variable ${n}`, type: 'text', options: '', default: '', numeric: false };
}

const splitList = (text) => String(text).split(',').map((s) => s.trim()).filter((s) => s !== '');

/**
 * The variables the rows say, and what is wrong with them: {variables, errors: [{index, field,
 * message}]} (`field` is name | options | default). With errors, `variables` is still the best
 * reading of the rows.
 */
export function fromRows(rows) {
  const errors = [];
  const seen = new Map();
  const variables = rows.map((r, index) => {
    const err = (field, message) => errors.push({ index, field, message });
    const name = r.name.trim();
    if (!IDENT.test(name)) err('name', 'Use letters, digits and _, not starting with a digit (code reads vars.<name>).');
    else if (seen.has(name)) err('name', `Also the name of variable ${seen.get(name) + 1}.`);
    else seen.set(name, index);
    const v = { name, label: r.label.trim() || name, type: r.type };
    if (r.type === 'select') {
      const items = splitList(r.options);
      const numeric = r.numeric && items.every((s) => Number.isFinite(Number(s)));
      v.options = items.map((s) => (numeric ? Number(s) : s));
      if (!items.length) err('options', 'List the choices, separated by commas.');
      const d = String(r.default).trim();
      const found = v.options.find((o) => String(o) === d);
      v.default = found ?? (numeric && d !== '' ? Number(d) : d);
      if (items.length && found === undefined) err('default', 'Pick one of the choices.');
    } else if (r.type === 'range') {
      const nums = splitList(r.options).map(Number);
      v.options = nums;
      const d = Number(String(r.default).trim());
      v.default = Number.isFinite(d) ? d : 0;
      if ((nums.length !== 2 && nums.length !== 3) || nums.some((n) => !Number.isFinite(n))) {
        err('options', 'Give min, max and optionally step, e.g. 0, 100, 5.');
      } else if (nums[0] > nums[1]) {
        err('options', 'min is greater than max.');
      } else if (nums.length === 3 && nums[2] <= 0) {
        err('options', 'step must be positive.');
      } else if (String(r.default).trim() === '' || !Number.isFinite(d) || d < nums[0] || d > nums[1]) {
        err('default', `A number from ${nums[0]} to ${nums[1]}.`);
      }
    } else {
      v.default = String(r.default);
    }
    return v;
  });
  return { variables, errors };
}
