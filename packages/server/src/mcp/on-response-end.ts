/**
 * Returns `response` with a body that calls `ended` once, when the body has been read to the end,
 * failed, or was cancelled (the client went away) — or at once for a response without a body. An
 * SSE response stays open long after the handler returned it; this is when it really ends.
 */
export function onResponseEnd(response: Response, ended: () => void): Response {
  let called = false;
  const end = () => {
    if (called) return;
    called = true;
    ended();
  };
  if (response.body === null) {
    end();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          end();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
