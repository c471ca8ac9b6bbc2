/**
 * The listeners of one thing that changes outside any component (the session, the
 * hour's quota, the address, the labels cards have seen): those who show it subscribe,
 * and render again when it emits.
 */
export interface Changes {
  subscribe(listener: () => void): () => void;
  emit(): void;
}

export function changes(): Changes {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit() {
      listeners.forEach((listener) => listener());
    },
  };
}
