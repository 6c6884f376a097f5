import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Where the test clients say they receive the code; nothing listens there (the tests read the consent redirect). */
export const OAUTH_TEST_REDIRECT = 'http://127.0.0.1:9/oauth/callback';

/**
 * An OAuth client as mcp-remote is one, for the MCP SDK's auth flow: it registers itself, sends the user to the consent
 * page (kept in `authorizationUrl`), and keeps its registration, tokens and PKCE verifier in memory.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(private readonly clientName = 'SDK test client') {}
  get redirectUrl() {
    return OAUTH_TEST_REDIRECT;
  }
  get clientMetadata() {
    return { redirect_uris: [OAUTH_TEST_REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_name: this.clientName };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}
