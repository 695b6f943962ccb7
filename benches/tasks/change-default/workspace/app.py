DEFAULT_LANGUAGE = "fr"


def hello(language=DEFAULT_LANGUAGE):
    return {"en": "Hello", "fr": "Bonjour"}[language]
