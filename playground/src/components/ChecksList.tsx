import type { McpDiagnostics } from '../mcp';

export function ChecksList(props: { checks: McpDiagnostics['checks'] }) {
  return (
    <ol className="checks">
      {props.checks.map((check) => (
        <li
          key={check.id}
          className={check.ok ? 'ok' : 'bad'}
          data-testid="check"
          data-id={check.id}
          data-ok={String(check.ok)}
        >
          <span className="check-mark" aria-hidden>
            {check.ok ? '✓' : '✗'}
          </span>
          <div>
            <div className="check-title">{check.title}</div>
            <div className="check-detail">{check.detail}</div>
          </div>
        </li>
      ))}
    </ol>
  );
}
