import type { Prompt } from '@modelcontextprotocol/client';
import { useState } from 'react';
import { usePrompt, usePromptList } from '../mcp';
import { Card } from './Card';
import { CompletionInput } from './CompletionInput';

/**
 * Prompts: `usePromptList()` to pick one, a form of its arguments whose fields suggest values
 * as you type (`useCompletion`), and `usePrompt(name, args)` for the messages, live: the
 * server's `prompts/list_changed` re-reads a prompt on screen.
 */
export function PromptsCard() {
  const prompts = usePromptList();
  const [name, setName] = useState<string>();
  const prompt = prompts.data?.find((entry) => entry.name === name) ?? prompts.data?.[0];
  return (
    <Card title="Prompts" subtitle="usePrompt() · useCompletion()" testId="prompts-card">
      {prompts.error && <div className="error">{prompts.error.message}</div>}
      {prompt ? (
        <>
          <select
            data-testid="prompt-select"
            value={prompt.name}
            onChange={(event) => setName(event.target.value)}
          >
            {prompts.data?.map((entry) => (
              <option key={entry.name} value={entry.name}>
                {entry.title ?? entry.name}
              </option>
            ))}
          </select>
          <PromptForm key={prompt.name} prompt={prompt} />
        </>
      ) : (
        <span className="muted">{prompts.isPending ? 'loading the prompts…' : 'no prompts'}</span>
      )}
    </Card>
  );
}

function PromptForm({ prompt }: { prompt: Prompt }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [asked, setAsked] = useState<Record<string, string>>();
  const result = usePrompt(prompt.name, asked, { enabled: asked !== undefined, retry: false });
  const ref = { type: 'ref/prompt' as const, name: prompt.name };
  return (
    <form
      className="prompt-form"
      onSubmit={(event) => {
        event.preventDefault();
        setAsked({ ...values });
      }}
    >
      {prompt.description && <p className="muted small">{prompt.description}</p>}
      {prompt.arguments?.map((argument) => (
        <CompletionInput
          key={argument.name}
          completionRef={ref}
          argument={argument.name}
          label={`${argument.name}${argument.required ? ' *' : ''}`}
          value={values[argument.name] ?? ''}
          context={values}
          onChange={(value) => setValues((current) => ({ ...current, [argument.name]: value }))}
        />
      ))}
      <button type="submit" data-testid="prompt-get">
        Get the prompt
      </button>
      {result.error && (
        <div className="error" role="alert">
          {result.error.message}
        </div>
      )}
      {result.data && (
        <div className="result" data-testid="prompt-result">
          {result.data.messages.map((message, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the server's messages, in order
            <pre key={index} className="text">
              {message.role}:{' '}
              {message.content.type === 'text' ? message.content.text : `[${message.content.type}]`}
            </pre>
          ))}
        </div>
      )}
    </form>
  );
}
