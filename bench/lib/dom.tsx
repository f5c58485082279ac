import { memo, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import type { ImplInstance } from './impls';
import type { Track } from './tracker';

// Rendering without act(): act would hold updates back and flush them in one
// go, which is exactly the scheduling a benchmark must not change.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;

export interface ViewSpec {
  id: number;
  uri: string;
}

export interface MountedViews {
  /** Replace the mounted views; committed synchronously. */
  set(specs: ViewSpec[]): void;
  unmount(): void;
  readonly container: HTMLElement;
}

interface ViewsProps {
  initial: ViewSpec[];
  View: ImplInstance['View'];
  track: Track;
  expose: (set: (specs: ViewSpec[]) => void) => void;
  memoRows: boolean;
}

/** A row that renders again only when its own props change (what a long list's rows do). */
const MemoRow = memo(function MemoRow({
  View,
  ...props
}: { View: ImplInstance['View'] } & Parameters<ImplInstance['View']>[0]) {
  return <View {...props} />;
});

function Views({ initial, View, track, expose, memoRows }: ViewsProps) {
  const [specs, set] = useState(initial);
  expose(set);
  return specs.map((spec) =>
    memoRows ? (
      <MemoRow key={spec.id} View={View} id={spec.id} uri={spec.uri} track={track} />
    ) : (
      <View key={spec.id} id={spec.id} uri={spec.uri} track={track} />
    ),
  );
}

/**
 * Renders the implementation's views into a fresh jsdom container.
 * `memoRows`: a row renders again only when its own props change.
 */
export function mountViews(
  impl: ImplInstance,
  track: Track,
  initial: ViewSpec[],
  { memoRows = false }: { memoRows?: boolean } = {},
): MountedViews {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  let setSpecs: (specs: ViewSpec[]) => void = () => {
    throw new Error('views not rendered yet');
  };
  const expose = (set: (specs: ViewSpec[]) => void) => {
    setSpecs = set;
  };
  flushSync(() =>
    root.render(
      impl.wrap(
        <Views
          initial={initial}
          View={impl.View}
          track={track}
          expose={expose}
          memoRows={memoRows}
        />,
      ),
    ),
  );
  return {
    container,
    set(specs) {
      flushSync(() => setSpecs(specs));
    },
    unmount() {
      flushSync(() => root.unmount());
      container.remove();
    },
  };
}
