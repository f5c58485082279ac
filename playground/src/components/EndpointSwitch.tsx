import { ENDPOINT_IDS, ENDPOINTS, type EndpointId } from '../../shared/demo';

/** Picking the other endpoint remounts the provider on its URL. */
export function EndpointSwitch(props: { value: EndpointId; onChange: (id: EndpointId) => void }) {
  return (
    <fieldset className="switch" aria-label="MCP endpoint">
      {ENDPOINT_IDS.map((id) => (
        <button
          key={id}
          type="button"
          data-testid={`endpoint-${id}`}
          aria-pressed={props.value === id}
          onClick={() => props.onChange(id)}
        >
          <strong>{ENDPOINTS[id].label}</strong>
          <code>{ENDPOINTS[id].path}</code>
        </button>
      ))}
    </fieldset>
  );
}
