import type { ResourceTemplateType } from '@modelcontextprotocol/client';
import { useState } from 'react';
import { expandTemplate, useResource, useResourceTemplates } from '../mcp';
import { textOf } from '../resourceText';
import { Card } from './Card';
import { CompletionInput } from './CompletionInput';

/** The variables of a simple RFC 6570 template (`note://{id}` → `id`). */
function variablesOf(template: string): string[] {
  return [...template.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((match) =>
    (match[1] ?? '').split(',').map((name) => name.replace(/[*]|:\d+$/, '')),
  );
}

/**
 * Resource templates: `useResourceTemplates()`, a form of a template's variables that suggests
 * values as you type (`useCompletion` with a template reference), and the resource they name,
 * read live with `useResource`.
 */
export function TemplatesCard() {
  const templates = useResourceTemplates();
  const template = templates.data?.[0];
  return (
    <Card
      title="Templates"
      subtitle="useResourceTemplates() · useCompletion()"
      testId="templates-card"
    >
      {template ? (
        <TemplateForm key={template.uriTemplate} template={template} />
      ) : (
        <span className="muted">{templates.isPending ? 'loading…' : 'no templates'}</span>
      )}
    </Card>
  );
}

function TemplateForm({ template }: { template: ResourceTemplateType }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [uri, setUri] = useState<string>();
  const ref = { type: 'ref/resource' as const, uri: template.uriTemplate };
  return (
    <form
      className="prompt-form"
      onSubmit={(event) => {
        event.preventDefault();
        setUri(expandTemplate(template.uriTemplate, values));
      }}
    >
      <code>{template.uriTemplate}</code>
      {variablesOf(template.uriTemplate).map((name) => (
        <CompletionInput
          key={name}
          completionRef={ref}
          argument={name}
          label={name}
          value={values[name] ?? ''}
          context={values}
          onChange={(value) => setValues((current) => ({ ...current, [name]: value }))}
        />
      ))}
      <button type="submit" data-testid="template-read">
        Read it
      </button>
      {uri && <TemplateResource uri={uri} />}
    </form>
  );
}

function TemplateResource({ uri }: { uri: string }) {
  const resource = useResource(uri, { retry: false });
  return (
    <div className={resource.error ? 'error' : 'result'} data-testid="template-resource">
      <code>{uri}</code>
      <pre className="text">
        {resource.error ? resource.error.message : (textOf(resource.data) ?? '…')}
      </pre>
    </div>
  );
}
