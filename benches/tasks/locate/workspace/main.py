from util.dates import parse_date

print(parse_date("2024-01-02"))
