import { useCallback, useSyncExternalStore } from 'react';
import {
  DEMO_USERS,
  type EndpointId,
  PRIVATE_URIS,
  PROTECTED_ENDPOINTS,
  type SignInMode,
} from '../../shared/demo';
import type { OAuthProvider } from '../auth';
import { useMcp, useResource } from '../mcp';
import { Card } from './Card';
import { QueryMeta } from './QueryMeta';
import { ResourceContent } from './ResourceContent';

/** Who the provider says is signed in (the token's subject), kept current. */
function useSignedInUser(provider: OAuthProvider): string | undefined {
  const subscribe = useCallback((listener: () => void) => provider.subscribe(listener), [provider]);
  return useSyncExternalStore(subscribe, () => provider.identity());
}

/**
 * Sign-in end to end: `useMcp()` says `unauthorized` when the server wants credentials, its
 * `authorize()` (from a click) leaves for the authorization server or opens a popup, and the
 * connection resumes by itself once tokens arrive. The inbox is `cacheScope: 'private'`: the
 * cache keeps it per signed-in user, so signing out drops it and the next user never sees it.
 */
export function SignInCard(props: {
  provider: OAuthProvider;
  endpoint: EndpointId;
  mode: SignInMode;
}) {
  const { provider } = props;
  const { status, error, authorize } = useMcp();
  const user = useSignedInUser(provider);
  const inbox = useResource(PRIVATE_URIS.inbox);
  const signedIn = user !== undefined && status === 'ready';
  return (
    <Card
      title="Sign-in"
      testId="signin-card"
      className="span-2"
      subtitle={
        <>
          <code>{PROTECTED_ENDPOINTS[props.endpoint].path}</code> wants a bearer token;{' '}
          {props.mode === 'redirect'
            ? 'signing in leaves this page and comes back'
            : 'signing in opens a popup'}
        </>
      }
      data={{ 'data-status': status, 'data-user': user ?? '' }}
    >
      <dl className="facts">
        <dt>status</dt>
        <dd>
          <strong data-testid="signin-status">{status}</strong>
        </dd>
        <dt>signed in as</dt>
        <dd>
          <strong data-testid="signin-user">{user ?? 'nobody'}</strong>
        </dd>
      </dl>
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="signin-button"
          disabled={signedIn}
          onClick={authorize}
        >
          Sign in…
        </button>
        <button
          type="button"
          data-testid="signout-button"
          disabled={user === undefined}
          onClick={() => provider.signOut()}
        >
          Sign out
        </button>
      </div>
      <p className="muted small">
        The authorization server (a demo, on its own port) asks who you are:{' '}
        {DEMO_USERS.join(' or ')}. Each reads their own <code>{PRIVATE_URIS.inbox}</code>.
      </p>
      {status === 'unauthorized' && error && (
        <div className="error" data-testid="signin-error" role="alert">
          {error.message}
        </div>
      )}
      <section
        className="subpanel"
        data-testid="panel-private"
        data-status={inbox.status}
        data-fetching={String(inbox.isFetching)}
      >
        <h3>
          Private resource <code>{PRIVATE_URIS.inbox}</code>
        </h3>
        <ResourceContent result={inbox.data} />
        <QueryMeta query={inbox} />
      </section>
    </Card>
  );
}
