import { type FormEvent, type ReactElement, useState } from 'react';
import type { PendingElicitation } from '../mcp';

/** One property of a form elicitation's `requestedSchema` (the spec's flat primitive subset). */
interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const?: unknown; title?: string }[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

type Value = string | boolean;

interface Field {
  name: string;
  schema: FieldSchema;
  required: boolean;
  /** Single-select choices (`enum`, or `oneOf` with `const`), with their labels. */
  options: { value: string; label: string }[] | undefined;
}

function fieldsOf(params: PendingElicitation['params']): Field[] {
  const schema = (params as { requestedSchema?: unknown }).requestedSchema as
    | { properties?: Record<string, FieldSchema>; required?: string[] }
    | undefined;
  const required = new Set(schema?.required ?? []);
  return Object.entries(schema?.properties ?? {}).map(([name, field]) => {
    let options: Field['options'];
    if (Array.isArray(field.enum)) {
      options = field.enum.map((value, i) => ({
        value: String(value),
        label: field.enumNames?.[i] ?? String(value),
      }));
    } else if (Array.isArray(field.oneOf)) {
      options = field.oneOf
        .filter((option) => option.const !== undefined)
        .map((option) => ({
          value: String(option.const),
          label: option.title ?? String(option.const),
        }));
    }
    return { name, schema: field, required: required.has(name), options };
  });
}

/** What the inputs start with: the schema's defaults. */
function initialValues(fields: Field[]): Record<string, Value> {
  const values: Record<string, Value> = {};
  for (const { name, schema } of fields) {
    if (schema.type === 'boolean') values[name] = schema.default === true;
    else values[name] = schema.default === undefined ? '' : String(schema.default);
  }
  return values;
}

/** The content to send: typed as the schema says; empty optional fields are left out. */
function contentOf(fields: Field[], values: Record<string, Value>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const { name, schema } of fields) {
    const value = values[name];
    if (schema.type === 'boolean') {
      content[name] = value === true;
      continue;
    }
    if (typeof value !== 'string' || value === '') continue;
    content[name] = schema.type === 'number' || schema.type === 'integer' ? Number(value) : value;
  }
  return content;
}

const INPUT_TYPES: Record<string, string> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

/**
 * A form built from an elicitation's `requestedSchema`: strings, numbers and integers,
 * booleans and single-select enums, with the schema's defaults filled in and its limits
 * checked by the browser. Accept sends the content; decline and cancel send nothing.
 */
export function ElicitationForm(props: { elicitation: PendingElicitation }) {
  const { elicitation } = props;
  const url =
    (elicitation.params as { mode?: string; url?: string }).mode === 'url'
      ? (elicitation.params as { url?: string }).url
      : undefined;
  const [fields] = useState(() => fieldsOf(elicitation.params));
  const [values, setValues] = useState(() => initialValues(fields));
  const set = (name: string, value: Value) =>
    setValues((current) => ({ ...current, [name]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    elicitation.accept(contentOf(fields, values));
  };
  return (
    <form
      className="elicitation"
      data-testid="elicitation"
      data-id={elicitation.id}
      onSubmit={submit}
    >
      <p className="elicitation-message" data-testid="elicitation-message">
        {elicitation.params.message}
      </p>
      {url !== undefined && (
        <p>
          The server asks you to open{' '}
          <a href={url} target="_blank" rel="noreferrer">
            {url}
          </a>
        </p>
      )}
      {fields.map(({ name, schema, required, options }) => {
        const id = `elicit-${elicitation.id}-${name}`;
        const label = (
          <span>
            {schema.title ?? name}
            {required && <span className="error-text"> *</span>}
          </span>
        );
        const value = values[name];
        let input: ReactElement;
        if (schema.type === 'boolean') {
          return (
            <label key={name} className="field field-check" htmlFor={id}>
              <input
                id={id}
                type="checkbox"
                name={name}
                data-testid={`field-${name}`}
                checked={value === true}
                onChange={(event) => set(name, event.target.checked)}
              />
              {label}
              {schema.description && <span className="muted small">{schema.description}</span>}
            </label>
          );
        }
        if (options) {
          input = (
            <select
              id={id}
              name={name}
              data-testid={`field-${name}`}
              required={required}
              value={String(value ?? '')}
              onChange={(event) => set(name, event.target.value)}
            >
              {(!required || value === '') && <option value="">—</option>}
              {options.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          );
        } else if (schema.type === 'number' || schema.type === 'integer') {
          input = (
            <input
              id={id}
              type="number"
              name={name}
              data-testid={`field-${name}`}
              required={required}
              step={schema.type === 'integer' ? 1 : 'any'}
              min={schema.minimum}
              max={schema.maximum}
              value={String(value ?? '')}
              onChange={(event) => set(name, event.target.value)}
            />
          );
        } else {
          input = (
            <input
              id={id}
              type={INPUT_TYPES[schema.format ?? ''] ?? 'text'}
              name={name}
              data-testid={`field-${name}`}
              required={required}
              minLength={schema.minLength}
              maxLength={schema.maxLength}
              value={String(value ?? '')}
              onChange={(event) => set(name, event.target.value)}
            />
          );
        }
        return (
          <label key={name} className="field" htmlFor={id}>
            {label}
            {input}
            {schema.description && <span className="muted small">{schema.description}</span>}
          </label>
        );
      })}
      <div className="row">
        <button type="submit" className="primary" data-testid="elicitation-accept">
          Accept
        </button>
        <button
          type="button"
          data-testid="elicitation-decline"
          onClick={() => elicitation.decline()}
        >
          Decline
        </button>
        <button type="button" data-testid="elicitation-cancel" onClick={() => elicitation.cancel()}>
          Cancel
        </button>
      </div>
    </form>
  );
}
