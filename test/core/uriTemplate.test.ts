import { describe, expect, it } from 'vitest';
import { expandTemplate } from '../../src/core/uriTemplate';

// The examples of RFC 6570 §1.2 (levels 1–3) and a few of level 4.
const vars = {
  var: 'value',
  hello: 'Hello World!',
  path: '/foo/bar',
  x: 1024,
  y: 768,
  empty: '',
  list: ['red', 'green', 'blue'],
  undef: undefined,
};

describe('expandTemplate (RFC 6570)', () => {
  it.each([
    ['{var}', 'value'],
    ['{hello}', 'Hello%20World%21'],
    ['{+var}', 'value'],
    ['{+hello}', 'Hello%20World!'],
    ['{+path}/here', '/foo/bar/here'],
    ['here?ref={+path}', 'here?ref=/foo/bar'],
    ['X{#var}', 'X#value'],
    ['X{#hello}', 'X#Hello%20World!'],
    ['map?{x,y}', 'map?1024,768'],
    ['{x,hello,y}', '1024,Hello%20World%21,768'],
    ['{+x,hello,y}', '1024,Hello%20World!,768'],
    ['{+path,x}/here', '/foo/bar,1024/here'],
    ['{#x,hello,y}', '#1024,Hello%20World!,768'],
    ['{#path,x}/here', '#/foo/bar,1024/here'],
    ['X{.var}', 'X.value'],
    ['X{.x,y}', 'X.1024.768'],
    ['{/var}', '/value'],
    ['{/var,x}/here', '/value/1024/here'],
    ['{;x,y}', ';x=1024;y=768'],
    ['{;x,y,empty}', ';x=1024;y=768;empty'],
    ['{?x,y}', '?x=1024&y=768'],
    ['{?x,y,empty}', '?x=1024&y=768&empty='],
    ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
    ['{&x,y,empty}', '&x=1024&y=768&empty='],
    ['{var:3}', 'val'],
    ['{list}', 'red,green,blue'],
    ['{/list*}', '/red/green/blue'],
    ['{?list*}', '?list=red&list=green&list=blue'],
    ['{undef}', ''],
    ['{?undef}', ''],
    ['file:///notes/{id}.md', 'file:///notes/%E2%9C%93.md'],
  ])('%s → %s', (template, expected) => {
    expect(expandTemplate(template, { ...vars, id: '✓' })).toBe(expected);
  });

  it('rejects a malformed expression with a clear error', () => {
    expect(() => expandTemplate('{a b}', {})).toThrow('invalid URI template expression');
  });
});
