import type { ReactNode } from 'react';
import { type PageId, PageNav } from './PageNav';

/** Every page's header: the name, the page links, then what this page adds. */
export function TopBar(props: { page: PageId; children: ReactNode }) {
  return (
    <header className="topbar wrap">
      <div className="brand">
        <h1>mcp-react-query</h1>
        <span className="muted">playground</span>
      </div>
      <PageNav current={props.page} />
      {props.children}
    </header>
  );
}
