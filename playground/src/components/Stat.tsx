/** One big number with its label. */
export function Stat(props: { label: string; value: number; testId?: string }) {
  return (
    <div className="stat">
      <div className="stat-value" data-testid={props.testId}>
        {props.value}
      </div>
      <div className="stat-label">{props.label}</div>
    </div>
  );
}
