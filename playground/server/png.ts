/**
 * A tiny PNG encoder, so the binary demo resource is real image bytes made on the spot (and can
 * change colour) instead of a checked-in blob.
 */
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

function hueToRgb(hue: number, lightness: number): [number, number, number] {
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const a = 0.7 * Math.min(lightness, 1 - lightness);
    return Math.round(255 * (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [channel(0), channel(8), channel(4)];
}

/** A `size`² RGBA badge: a ring in `hue` around a lighter disc, transparent outside. */
export function badgePng(hue: number, size = 48): Buffer {
  const ring = hueToRgb(hue, 0.45);
  const fill = hueToRgb(hue, 0.85);
  const rows: Buffer[] = [];
  const centre = (size - 1) / 2;
  for (let y = 0; y < size; y += 1) {
    // Each scanline starts with its filter type; 0 = none.
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x += 1) {
      const distance = Math.hypot(x - centre, y - centre) / (size / 2);
      const colour = distance > 1 ? undefined : distance > 0.72 ? ring : fill;
      if (!colour) continue;
      row.set([...colour, 255], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
