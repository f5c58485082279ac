import type { PromptReference, ResourceTemplateReference } from '@modelcontextprotocol/client';
import { useId } from 'react';
import { useCompletion } from '../mcp';

/**
 * A text field that suggests the server's values as you type (`useCompletion`): asked once
 * the typing pauses, the request a later keystroke made useless cancelled on the server.
 */
export function CompletionInput(props: {
  completionRef: PromptReference | ResourceTemplateReference;
  argument: string;
  label: string;
  value: string;
  /** The other arguments chosen so far (the server may narrow by them). */
  context?: Record<string, string>;
  onChange: (value: string) => void;
}) {
  const id = useId();
  const { [props.argument]: _self, ...others } = props.context ?? {};
  const completion = useCompletion({
    ref: props.completionRef,
    argument: props.argument,
    value: props.value,
    context: others,
  });
  return (
    <label className="completion" data-testid={`complete-${props.argument}`}>
      <span>{props.label}</span>
      <input
        list={`${id}-values`}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        autoComplete="off"
      />
      <datalist id={`${id}-values`}>
        {completion.values.map((value) => (
          <option key={value} value={value} />
        ))}
      </datalist>
      <span className="muted small" data-testid={`suggestions-${props.argument}`}>
        {completion.supported === false
          ? 'no completions on this server'
          : completion.values.join(' · ') || (completion.isFetching ? '…' : '')}
      </span>
    </label>
  );
}
