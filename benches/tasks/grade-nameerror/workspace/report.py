from grades import letter_grade, passed

STUDENTS = {"ana": [95, 88, 92], "bo": [55, 61, 58], "cy": [78, 81, 74]}

if __name__ == "__main__":
    for name, scores in STUDENTS.items():
        status = "pass" if passed(scores) else "fail"
        print(f"{name}: {letter_grade(scores)} ({status})")
