import type { ReadResourceResult } from '@modelcontextprotocol/client';

// Only these become a data URL: anything else (say image/svg+xml) is not rendered from a server.
const SAFE_IMAGE = new Set(['image/png', 'image/gif', 'image/jpeg', 'image/webp']);

type Content = ReadResourceResult['contents'][number];

/** Text as text (never HTML), raster images as <img>, other binaries as a size. */
export function ContentItem(props: { content: Content; big?: boolean }) {
  const { content } = props;
  if ('text' in content && typeof content.text === 'string') {
    return <pre className={props.big ? 'text big' : 'text'}>{content.text}</pre>;
  }
  if ('blob' in content && typeof content.blob === 'string') {
    const mime = content.mimeType ?? 'application/octet-stream';
    if (SAFE_IMAGE.has(mime)) {
      return (
        <img className="blob-image" alt={content.uri} src={`data:${mime};base64,${content.blob}`} />
      );
    }
    return (
      <div className="muted">
        {Math.floor((content.blob.length * 3) / 4)} bytes of {mime}
      </div>
    );
  }
  return <div className="muted">unsupported content</div>;
}
