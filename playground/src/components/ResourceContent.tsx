import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { ContentItem } from './ContentItem';

/** Every content block of a read result. */
export function ResourceContent(props: { result: ReadResourceResult | undefined; big?: boolean }) {
  if (!props.result) return <div className="content placeholder" data-testid="content" />;
  return (
    <div className="content" data-testid="content">
      {props.result.contents.map((content, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: blocks have no identity; each read replaces them all
        <ContentItem key={`${content.uri}#${index}`} content={content} big={props.big} />
      ))}
    </div>
  );
}
