import { useEffect, useState } from 'react';
import type { EndpointId } from '../../shared/demo';
import { completeAuthorization } from '../auth';
import { providerFor, signInHref } from '../signin';

type Finished = Awaited<ReturnType<typeof completeAuthorization>>;

/*
 * One completion per callback URL: the code can be redeemed once, and React's StrictMode runs
 * an effect twice in development (a second `completeAuthorization` would find the `state`
 * consumed and fail, after the first one had already signed in).
 */
const finishing = new Map<string, Promise<Finished>>();

function finish(endpoint: EndpointId): Promise<Finished> {
  const href = window.location.href;
  let done = finishing.get(href);
  if (!done) {
    // A popup hands the URL to the page that opened it and closes; otherwise this page
    // exchanges the code (the provider that started the sign-in: redirect mode).
    done = completeAuthorization(providerFor(endpoint, 'redirect'));
    finishing.set(href, done);
  }
  return done;
}

/** Where to go afterwards: the page the user left, if it is one of ours. */
function sameOrigin(to: string | undefined, fallback: string): string {
  if (!to) return fallback;
  const url = new URL(to, window.location.origin);
  return url.origin === window.location.origin ? `${url.pathname}${url.search}` : fallback;
}

/** `/callback/<endpoint>`: the authorization server's redirect lands here. */
export function Callback(props: { endpoint: EndpointId; onDone: (to: string) => void }) {
  const { endpoint, onDone } = props;
  const [failure, setFailure] = useState<string>();
  const [popup, setPopup] = useState(false);
  useEffect(() => {
    let live = true;
    finish(endpoint).then(
      (result) => {
        if (!live) return;
        if (result.popup) setPopup(true);
        else onDone(sameOrigin(result.returnTo, signInHref(endpoint, 'redirect')));
      },
      (error: unknown) => {
        if (live) setFailure(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      live = false;
    };
  }, [endpoint, onDone]);
  return (
    <div className="page callback" data-testid="callback">
      {failure ? (
        <div className="error" data-testid="callback-error" role="alert">
          Sign-in failed: {failure}{' '}
          <a href={signInHref(endpoint, 'redirect')}>Back to the sign-in page</a>
        </div>
      ) : popup ? (
        <p>Signed in. You can close this window.</p>
      ) : (
        <p className="muted">Finishing the sign-in…</p>
      )}
    </div>
  );
}
