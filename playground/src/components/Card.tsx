import type { ReactNode } from 'react';

export function Card(props: {
  title: ReactNode;
  testId: string;
  subtitle?: ReactNode;
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
  data?: Record<`data-${string}`, string>;
}) {
  return (
    <section className={`card ${props.className ?? ''}`} data-testid={props.testId} {...props.data}>
      <header className="card-head">
        <div>
          <h2>{props.title}</h2>
          {props.subtitle && <div className="card-sub">{props.subtitle}</div>}
        </div>
        {props.actions && <div className="card-actions">{props.actions}</div>}
      </header>
      <div className="card-body">{props.children}</div>
    </section>
  );
}
