/** The playground's two pages; plain links (each page owns its connection). */
export function PageNav(props: { current: 'dashboard' | 'signin' }) {
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
    </nav>
  );
}
