/*
 * schema-form.js: a form generated from a JSON Schema of an object (a tool's
 * `parameters_schema`, or a custom `response_schema`), and its validation in the browser
 * before anything is sent. One field per property, named after it: number inputs with min/max
 * for integer and number, text inputs with minlength/maxlength for strings, a checkbox for a
 * boolean, a select for an enum, a JSON text area for objects and arrays. `read` collects the
 * values and lists every problem (required, type, integer, bounds, lengths, pattern, enum).
 */

import { el } from './dom.js';

/** The type a property schema declares (the first that is not "null"), and whether null is allowed. */
function typeOf(schema) {
  const declared = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = declared.find((entry) => entry && entry !== 'null');
  if (type) return { type, nullable: declared.includes('null') };
  if (Array.isArray(schema.enum)) return { type: 'enum', nullable: false };
  if (schema.properties) return { type: 'object', nullable: false };
  return { type: 'json', nullable: false };
}

/**
 * The property names of an object schema in the order a person reads them: the required ones
 * in the order `required` lists them (the declaration order; `properties` may come sorted),
 * then the others, then any name of `values` the schema does not describe.
 */
export function orderedNames(schema, values) {
  const properties = (schema && typeof schema === 'object' && schema.properties) || {};
  const required = Array.isArray(schema && schema.required) ? schema.required.filter((name) => name in properties) : [];
  const names = [...required, ...Object.keys(properties).filter((name) => !required.includes(name))];
  return [...names, ...Object.keys(values || {}).filter((name) => !names.includes(name))];
}

/** The properties of an object schema, in reading order, with whether each is required. */
export function propertiesOf(schema) {
  const properties = (schema && typeof schema === 'object' && schema.properties) || {};
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  return orderedNames(schema).map((name) => ({
    name,
    schema: properties[name] && typeof properties[name] === 'object' ? properties[name] : {},
    required: required.has(name),
  }));
}

/**
 * The fields of a form for `schema`, filled with `values`. `prefix` keeps ids unique when a
 * page holds two generated forms. Answers `{fields, read}`; `read()` answers
 * `{value, problems}` where `problems` is a list of `{name, message}`.
 */
export function schemaFields(schema, values, prefix) {
  const entries = propertiesOf(schema).map((property) => field(property, values ? values[property.name] : undefined, prefix));
  const known = new Set(entries.map((entry) => entry.name));
  /* Arguments the schema does not describe are kept as they are: an edit replaces the whole set. */
  const extra = Object.entries(values || {}).filter(([name]) => !known.has(name));
  return {
    fields: entries.map((entry) => entry.node),
    read() {
      const value = Object.fromEntries(extra);
      const problems = [];
      for (const entry of entries) {
        entry.input.removeAttribute('aria-invalid');
        const result = entry.read();
        if (result.problem) {
          problems.push({ name: entry.name, message: result.problem, input: entry.input });
          entry.input.setAttribute('aria-invalid', 'true');
        } else if (result.present) {
          value[entry.name] = result.value;
        }
      }
      return { value, problems };
    },
  };
}

/** One field: its wrapper node, its input, and how to read and check it. */
function field({ name, schema, required }, initial, prefix) {
  const id = `${prefix}-${name}`;
  const hintId = `${id}-hint`;
  const { type, nullable } = typeOf(schema);
  const hints = [];
  if (typeof schema.description === 'string' && schema.description) hints.push(schema.description);
  const limits = limitText(schema, type);
  if (limits) hints.push(limits);
  const labelText = `${schema.title || name}${required ? ' (required)' : ''}`;
  const described = hints.length ? hintId : null;
  const hint = hints.length ? el('p', { class: 'hint', id: hintId }, hints.join(' · ')) : null;
  let input;

  if (Array.isArray(schema.enum)) {
    input = el(
      'select',
      { id, name, 'aria-describedby': described, required },
      required ? null : el('option', { value: '' }, '(none)'),
      schema.enum.map((option, index) =>
        el('option', { value: String(index), selected: sameValue(option, initial) }, typeof option === 'string' ? option : JSON.stringify(option)),
      ),
    );
    if (required && !schema.enum.some((option) => sameValue(option, initial))) {
      input.prepend(el('option', { value: '', selected: true, disabled: true }, 'Choose…'));
    }
    const read = () => {
      if (input.value === '') return required ? { problem: 'choose a value' } : { present: false };
      return { present: true, value: schema.enum[Number(input.value)] };
    };
    return wrap(name, id, labelText, input, hint, read);
  }

  if (type === 'boolean') {
    input = el('input', { id, name, type: 'checkbox', 'aria-describedby': described, checked: initial === true });
    const node = el('div', { class: 'field field-check' }, input, el('label', { for: id }, labelText), hint);
    const read = () => ({ present: required || initial !== undefined || input.checked, value: input.checked });
    return { name, node, input, read };
  }

  if (type === 'integer' || type === 'number') {
    const attributes = {
      id,
      name,
      type: 'number',
      inputmode: type === 'integer' ? 'numeric' : 'decimal',
      step: type === 'integer' ? '1' : 'any',
      min: typeof schema.minimum === 'number' ? schema.minimum : null,
      max: typeof schema.maximum === 'number' ? schema.maximum : null,
      required,
      'aria-describedby': described,
      value: typeof initial === 'number' ? initial : null,
    };
    input = el('input', attributes);
    const read = () => {
      const text = input.value.trim();
      if (text === '') {
        if (input.validity && input.validity.badInput) return { problem: 'must be a number' };
        if (required) return { problem: 'is required' };
        return nullable && initial === null ? { present: true, value: null } : { present: false };
      }
      const number = Number(text);
      if (!Number.isFinite(number)) return { problem: 'must be a number' };
      if (type === 'integer' && !Number.isInteger(number)) return { problem: 'must be a whole number' };
      return numberProblem(schema, number) || { present: true, value: number };
    };
    return wrap(name, id, labelText, input, hint, read);
  }

  if (type === 'string') {
    const long = typeof schema.maxLength === 'number' ? schema.maxLength > 200 : false;
    input = el(long ? 'textarea' : 'input', {
      id,
      name,
      type: long ? null : 'text',
      rows: long ? '3' : null,
      minlength: typeof schema.minLength === 'number' ? schema.minLength : null,
      maxlength: typeof schema.maxLength === 'number' ? schema.maxLength : null,
      required,
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': described,
      value: typeof initial === 'string' ? initial : null,
    });
    const read = () => {
      const text = input.value;
      if (text === '') {
        if (required) return { problem: 'is required' };
        if (initial === undefined || initial === null) return { present: initial === null, value: null };
      }
      return stringProblem(schema, text) || { present: true, value: text };
    };
    return wrap(name, id, labelText, input, hint, read);
  }

  /* Objects, arrays and anything else: JSON text. */
  input = el('textarea', {
    id,
    name,
    rows: '4',
    class: 'json',
    spellcheck: 'false',
    required,
    'aria-describedby': described,
    value: initial === undefined ? '' : JSON.stringify(initial, null, 2),
  });
  const read = () => {
    const text = input.value.trim();
    if (text === '') return required ? { problem: 'is required' } : { present: false };
    try {
      const value = JSON.parse(text);
      if (type === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        return { problem: 'must be a JSON object' };
      }
      if (type === 'array' && !Array.isArray(value)) return { problem: 'must be a JSON array' };
      return { present: true, value };
    } catch {
      return { problem: 'must be valid JSON' };
    }
  };
  return wrap(name, id, `${labelText} (JSON)`, input, hint, read);
}

function wrap(name, id, labelText, input, hint, read) {
  const node = el('div', { class: 'field' }, el('label', { for: id }, labelText), input, hint);
  return { name, node, input, read };
}

function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The bounds a property states, in words: "1 to 50000", "at most 32 characters". */
function limitText(schema, type) {
  if (type === 'integer' || type === 'number') {
    const low = schema.minimum ?? schema.exclusiveMinimum;
    const high = schema.maximum ?? schema.exclusiveMaximum;
    const kind = type === 'integer' ? 'whole number' : 'number';
    if (typeof low === 'number' && typeof high === 'number') return `a ${kind} from ${low} to ${high}`;
    if (typeof low === 'number') return `a ${kind}, at least ${low}`;
    if (typeof high === 'number') return `a ${kind}, at most ${high}`;
    return `a ${kind}`;
  }
  if (type === 'string') {
    const min = schema.minLength;
    const max = schema.maxLength;
    if (typeof min === 'number' && typeof max === 'number') return `${min} to ${max} characters`;
    if (typeof max === 'number') return `at most ${max} characters`;
    if (typeof min === 'number') return `at least ${min} characters`;
  }
  return '';
}

function numberProblem(schema, number) {
  if (typeof schema.minimum === 'number' && number < schema.minimum) return { problem: `must be at least ${schema.minimum}` };
  if (typeof schema.maximum === 'number' && number > schema.maximum) return { problem: `must be at most ${schema.maximum}` };
  if (typeof schema.exclusiveMinimum === 'number' && number <= schema.exclusiveMinimum) {
    return { problem: `must be more than ${schema.exclusiveMinimum}` };
  }
  if (typeof schema.exclusiveMaximum === 'number' && number >= schema.exclusiveMaximum) {
    return { problem: `must be less than ${schema.exclusiveMaximum}` };
  }
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
    const ratio = number / schema.multipleOf;
    if (Math.abs(ratio - Math.round(ratio)) > 1e-9) return { problem: `must be a multiple of ${schema.multipleOf}` };
  }
  return null;
}

function stringProblem(schema, text) {
  const length = [...text].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    return { problem: `must be at least ${schema.minLength} characters` };
  }
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    return { problem: `must be at most ${schema.maxLength} characters` };
  }
  if (typeof schema.pattern === 'string') {
    try {
      if (!new RegExp(schema.pattern, 'u').test(text)) return { problem: `must match the pattern ${schema.pattern}` };
    } catch {
      /* a pattern the browser cannot read is left to the server */
    }
  }
  return null;
}
