from dataclasses import dataclass


@dataclass
class Contact:
    name: str
    email: str


def to_dict(contact):
    return {"name": contact.name, "email": contact.email}


def from_dict(data):
    return Contact(name=data["name"], email=data["email"])
