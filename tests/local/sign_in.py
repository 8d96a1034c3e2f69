"""Signing in to a running local stack as its users do: an invited user's ID token for the jobs API, and the
console's sign-in form in a browser (``tests.browser``), the temporary password first and a new one after it."""

from __future__ import annotations

from typing import Any

import boto3

from ocr_platform.local import stack

PASSWORD = "Correct-Horse-42!"
TEMPORARY_PASSWORD = "Invite-only-2026!"


def invite(local: stack.StackInfo, email: str) -> None:
    """Invite a user as an administrator does: a temporary password, which the user must replace."""
    boto3.client("cognito-idp").admin_create_user(UserPoolId=local.user_pool_id, Username=email,
                                                  TemporaryPassword=TEMPORARY_PASSWORD, MessageAction="SUPPRESS")


def id_token(local: stack.StackInfo, email: str) -> str:
    """An invited user of the stack's pool, signed in as the README shows (the temporary password, then
    Cognito's NEW_PASSWORD_REQUIRED challenge answered with a password of their own): their ID token."""
    cognito = boto3.client("cognito-idp")
    invite(local, email)
    challenge = cognito.initiate_auth(ClientId=local.user_pool_client_id, AuthFlow="USER_PASSWORD_AUTH",
                                      AuthParameters={"USERNAME": email, "PASSWORD": TEMPORARY_PASSWORD})
    assert (challenge["ChallengeName"], "AuthenticationResult" in challenge) == ("NEW_PASSWORD_REQUIRED", False)
    answer = cognito.respond_to_auth_challenge(
        ClientId=local.user_pool_client_id, ChallengeName="NEW_PASSWORD_REQUIRED", Session=challenge["Session"],
        ChallengeResponses={"USERNAME": email, "NEW_PASSWORD": PASSWORD},
    )
    return str(answer["AuthenticationResult"]["IdToken"])


def open_console(browser: Any, local: stack.StackInfo) -> None:
    """The console, signed out: its tab's sessionStorage (where it keeps the tokens) emptied."""
    browser.get(local.console_url)
    browser.execute_script("sessionStorage.clear()")
    browser.get(local.console_url)


def sign_in(browser: Any, email: str, password: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    field = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "email")))
    field.clear()
    field.send_keys(email)
    browser.find_element(By.ID, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "#sign-in button[type=submit]").click()


def choose_password(browser: Any, password: str, repeated: str | None = None) -> None:
    """The "Choose a new password" step: the new password, twice (or ``repeated`` the second time)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "new-password"))).send_keys(password)
    browser.find_element(By.ID, "confirm-password").send_keys(password if repeated is None else repeated)
    browser.find_element(By.CSS_SELECTOR, "#new-password-form button[type=submit]").click()
