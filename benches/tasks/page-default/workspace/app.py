from pager import paginate, page_count

ARTICLES = [f"article-{i}" for i in range(1, 56)]


def show(page):
    rows = paginate(ARTICLES, page)
    print(f"page {page} of {page_count(ARTICLES)}")
    for row in rows:
        print(" ", row)


if __name__ == "__main__":
    show(1)
