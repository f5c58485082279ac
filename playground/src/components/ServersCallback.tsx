import { useEffect, useState } from 'react';
import { serverSignIn } from '../serverList';

type Finished = Awaited<ReturnType<typeof serverSignIn.complete>>;

/* One completion per callback URL (a code is redeemed once; StrictMode runs effects twice). */
const finishing = new Map<string, Promise<Finished>>();

function finish(): Promise<Finished> {
  const href = window.location.href;
  let done = finishing.get(href);
  if (!done) {
    done = serverSignIn.complete();
    finishing.set(href, done);
  }
  return done;
}

/**
 * `/callback/servers`: the one callback page of every server on the Servers page. The `state`
 * the authorization server sends back says whose sign-in this is; that server's provider
 * finishes it, and the page goes back to where the user was.
 */
export function ServersCallback(props: { onDone: (to: string) => void }) {
  const { onDone } = props;
  const [failure, setFailure] = useState<string>();
  const [popup, setPopup] = useState(false);
  useEffect(() => {
    let live = true;
    finish().then(
      (result) => {
        if (!live) return;
        if (result.popup) setPopup(true);
        else {
          const back = new URL(result.returnTo ?? '/servers', window.location.origin);
          onDone(
            back.origin === window.location.origin ? `${back.pathname}${back.search}` : '/servers',
          );
        }
      },
      (error: unknown) => {
        if (live) setFailure(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      live = false;
    };
  }, [onDone]);
  return (
    <div className="page callback" data-testid="servers-callback">
      {failure ? (
        <div className="error" data-testid="servers-callback-error" role="alert">
          Sign-in failed: {failure} <a href="/servers">Back to the servers</a>
        </div>
      ) : popup ? (
        <p>Signed in. You can close this window.</p>
      ) : (
        <p className="muted">Finishing the sign-in…</p>
      )}
    </div>
  );
}
