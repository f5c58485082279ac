export type PageId = 'dashboard' | 'signin' | 'servers';

/** The playground's pages; plain links (each page owns its connections). */
export function PageNav(props: { current: PageId }) {
  return (
    <nav className="page-nav" aria-label="Pages">
      <a
        href="/"
        data-testid="nav-dashboard"
        aria-current={props.current === 'dashboard' ? 'page' : undefined}
      >
        Live resources
      </a>
      <a
        href="/signin"
        data-testid="nav-signin"
        aria-current={props.current === 'signin' ? 'page' : undefined}
      >
        Sign-in
      </a>
      <a
        href="/servers"
        data-testid="nav-servers"
        aria-current={props.current === 'servers' ? 'page' : undefined}
      >
        Servers
      </a>
    </nav>
  );
}
