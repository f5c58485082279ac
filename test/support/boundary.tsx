import { Component, type ReactNode } from 'react';

/** An error boundary that shows the message of the error that reached it, as `boundary`. */
export class Boundary extends Component<{ children: ReactNode }, { caught?: string }> {
  override state: { caught?: string } = {};
  static getDerivedStateFromError = (error: Error) => ({ caught: error.message });
  override render() {
    const { caught } = this.state;
    return caught === undefined ? this.props.children : <p data-testid="boundary">{caught}</p>;
  }
}
