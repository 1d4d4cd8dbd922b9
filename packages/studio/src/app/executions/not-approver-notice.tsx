import type { CallerView } from "../api/api-types.js";

/**
 * Why this caller sees no Approve/Reject buttons: its key is not an approver key (or, without
 * keys, it is not on the server's machine). Says how to decide rather than hiding it silently.
 */
export function NotApproverNotice({ caller }: { caller: CallerView }) {
  if (!caller.apiKeysConfigured) {
    return (
      <p class="notice notice-warning" data-not-approver>
        This server has no API keys, so only a browser on the server's own machine may approve or reject. Open
        the Studio there, or configure an approver key (<code>key:owner+approver</code> in{" "}
        <code>SKILLBOX_API_KEYS</code>).
      </p>
    );
  }
  return (
    <p class="notice notice-warning" data-not-approver>
      Your API key (owner <code>{caller.owner}</code>) may run, read and cancel these executions but not
      approve or reject them. Sign in with one of its approver keys, configured as{" "}
      <code>key:{caller.owner}+approver</code> in <code>SKILLBOX_API_KEYS</code>.
    </p>
  );
}
