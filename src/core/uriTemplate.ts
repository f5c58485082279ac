import { McpQueryError } from './errors';

export type TemplateValue = string | number | boolean | readonly (string | number | boolean)[];
export type TemplateVariables = Readonly<Record<string, TemplateValue | null | undefined>>;

interface Operator {
  first: string;
  separator: string;
  /** Emit `name=value` pairs. */
  named: boolean;
  /** What a named variable with an empty value becomes after its name. */
  ifEmpty: string;
  /** Reserved characters pass through unencoded ({+var}, {#var}). */
  allowReserved: boolean;
}

const OPERATORS: Record<string, Operator> = {
  '': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: false },
  '+': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '#': { first: '#', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '.': { first: '.', separator: '.', named: false, ifEmpty: '', allowReserved: false },
  '/': { first: '/', separator: '/', named: false, ifEmpty: '', allowReserved: false },
  ';': { first: ';', separator: ';', named: true, ifEmpty: '', allowReserved: false },
  '?': { first: '?', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
  '&': { first: '&', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
};

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, allowReserved: boolean): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i] as string;
    if (UNRESERVED.test(char) || (allowReserved && RESERVED.test(char))) {
      out += char;
    } else if (
      allowReserved &&
      char === '%' &&
      /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))
    ) {
      out += value.slice(i, i + 3);
      i += 2;
    } else {
      const code = value.codePointAt(i) as number;
      const whole = String.fromCodePoint(code);
      if (whole.length === 2) i += 1;
      out += encodeURIComponent(whole).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      );
    }
  }
  return out;
}

/**
 * Expands an RFC 6570 URI template (levels 1–3, plus the level-4 prefix
 * `:n` and explode `*` modifiers) — the URI a resource template names for
 * these variables, and so the exact string to read and subscribe.
 */
export function expandTemplate(template: string, variables: TemplateVariables): string {
  return template.replace(/\{([^{}]*)\}/g, (_match, expression: string) => {
    const operatorChar = /^[+#./;?&]/.test(expression) ? (expression[0] as string) : '';
    const operator = OPERATORS[operatorChar] as Operator;
    const specs = expression.slice(operatorChar.length).split(',');
    const parts: string[] = [];
    for (const spec of specs) {
      const found = /^([A-Za-z0-9_.%]+)(?::(\d+)|(\*))?$/.exec(spec);
      if (!found) {
        throw new McpQueryError(
          'INVALID_TEMPLATE',
          `invalid URI template expression {${expression}}`,
        );
      }
      const [, name = '', prefix, explode] = found;
      const value = variables[name];
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) {
        if (value.length === 0) continue;
        const items = value.map((item) => encode(String(item), operator.allowReserved));
        if (explode) {
          parts.push(
            items
              .map((item) => (operator.named ? `${name}=${item}` : item))
              .join(operator.separator),
          );
        } else {
          parts.push(`${operator.named ? `${name}=` : ''}${items.join(',')}`);
        }
        continue;
      }
      let text = String(value);
      if (prefix !== undefined) text = [...text].slice(0, Number(prefix)).join('');
      const encoded = encode(text, operator.allowReserved);
      if (!operator.named) parts.push(encoded);
      else parts.push(encoded === '' ? `${name}${operator.ifEmpty}` : `${name}=${encoded}`);
    }
    return parts.length === 0 ? '' : operator.first + parts.join(operator.separator);
  });
}
