import json

from contacts import Contact, from_dict, to_dict


def save(contacts, path):
    with open(path, "w") as f:
        json.dump([to_dict(c) for c in contacts], f, indent=2)


def load(path):
    with open(path) as f:
        return [from_dict(d) for d in json.load(f)]
