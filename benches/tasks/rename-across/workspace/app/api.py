from app.db import fetch_user


def get(user_id):
    user = fetch_user(user_id)
    return {"name": user} if user else {"error": "not found"}
