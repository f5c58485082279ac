import { describe, expect, it } from 'vitest';
import { digest } from '../../src/core/digest';
import { checkContents } from '../../src/core/readResult';

const text = (uri: string, value: string, extra: Record<string, unknown> = {}) => ({
  uri,
  mimeType: 'text/plain',
  text: value,
  ...extra,
});

describe('digest', () => {
  it('equal contents give equal digests, whatever the order of their keys', () => {
    const a = [
      { uri: 'a://1', mimeType: 'text/plain', text: 'x', _meta: { b: 1, a: [2, { d: 3, c: 4 }] } },
    ];
    const b = [
      { _meta: { a: [2, { c: 4, d: 3 }], b: 1 }, text: 'x', mimeType: 'text/plain', uri: 'a://1' },
    ];
    expect(digest(a)).toBe(digest(b));
    expect(digest([text('a://1', 'x')])).toBe(digest([text('a://1', 'x')]));
  });

  it('any change of text, blob, URI, MIME type, extra field or item order changes it', () => {
    const base = digest([text('a://1', 'hello'), text('a://1/b', 'there')]);
    const variants = [
      [text('a://1', 'hellO'), text('a://1/b', 'there')],
      [text('a://1', 'hello'), text('a://1/b', 'there', { annotations: { priority: 1 } })],
      [text('a://1', 'hello', { mimeType: 'text/markdown' }), text('a://1/b', 'there')],
      [text('a://2', 'hello'), text('a://1/b', 'there')],
      [text('a://1/b', 'there'), text('a://1', 'hello')],
      [{ uri: 'a://1', mimeType: 'text/plain', blob: 'hello' }, text('a://1/b', 'there')],
      [{ uri: 'a://1', text: 'hello' }, text('a://1/b', 'there')],
      [text('a://1', 'hello')],
      // The same characters split differently between fields.
      [text('a://1', 'hellothere'), text('a://1/b', '')],
    ];
    const digests = variants.map((contents) => digest(contents));
    for (const other of digests) expect(other).not.toBe(base);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it('items that are not well-formed text or blob contents are fingerprinted whole', () => {
    expect(digest([{ uri: 'a://1', text: 5 }])).not.toBe(digest([{ uri: 'a://1', text: 6 }]));
    expect(digest([{ uri: 'a://1', text: 'x', blob: 'y' }])).not.toBe(
      digest([{ uri: 'a://1', text: 'x', blob: 'z' }]),
    );
    expect(digest([null, 'a'])).not.toBe(digest([null, 'b']));
    expect(digest([{ uri: 'a://1', text: 'x' }])).toMatch(/^[0-9a-z]+\.[0-9a-z]+$/);
  });
});

describe('checkContents', () => {
  it('takes the requested URI, its normal form, and URIs below it', () => {
    expect(() => checkContents('a://1', { contents: [text('a://1', 'x')] })).not.toThrow();
    expect(() =>
      checkContents('file:///a b', { contents: [text('file:///a%20b', 'x')] }),
    ).not.toThrow();
    expect(() =>
      checkContents('file:///dir', { contents: [text('file:///dir/f', 'x')] }),
    ).not.toThrow();
  });

  it('refuses no contents, and contents of another resource', () => {
    expect(() => checkContents('a://1', { contents: [] })).toThrow(/no contents/);
    expect(() => checkContents('a://1', { contents: [text('a://10', 'x')] })).toThrow(/a:\/\/10/);
  });
});
