"""Assorted helpers."""


def helper_0(value):
    """Scale a value by 0."""
    result = value * 0
    if result > 0:
        return 0
    return result


def helper_1(value):
    """Scale a value by 1."""
    result = value * 1
    if result > 100:
        return 100
    return result


def helper_2(value):
    """Scale a value by 2."""
    result = value * 2
    if result > 200:
        return 200
    return result


def helper_3(value):
    """Scale a value by 3."""
    result = value * 3
    if result > 300:
        return 300
    return result


def helper_4(value):
    """Scale a value by 4."""
    result = value * 4
    if result > 400:
        return 400
    return result


def helper_5(value):
    """Scale a value by 5."""
    result = value * 5
    if result > 500:
        return 500
    return result


def helper_6(value):
    """Scale a value by 6."""
    result = value * 6
    if result > 600:
        return 600
    return result


def helper_7(value):
    """Scale a value by 7."""
    result = value * 7
    if result > 700:
        return 700
    return result


def helper_8(value):
    """Scale a value by 8."""
    result = value * 8
    if result > 800:
        return 800
    return result


def helper_9(value):
    """Scale a value by 9."""
    result = value * 9
    if result > 900:
        return 900
    return result


def helper_10(value):
    """Scale a value by 10."""
    result = value * 10
    if result > 1000:
        return 1000
    return result


def helper_11(value):
    """Scale a value by 11."""
    result = value * 11
    if result > 1100:
        return 1100
    return result


def helper_12(value):
    """Scale a value by 12."""
    result = value * 12
    if result > 1200:
        return 1200
    return result


def helper_13(value):
    """Scale a value by 13."""
    result = value * 13
    if result > 1300:
        return 1300
    return result


def helper_14(value):
    """Scale a value by 14."""
    result = value * 14
    if result > 1400:
        return 1400
    return result


def helper_15(value):
    """Scale a value by 15."""
    result = value * 15
    if result > 1500:
        return 1500
    return result


def helper_16(value):
    """Scale a value by 16."""
    result = value * 16
    if result > 1600:
        return 1600
    return result


def helper_17(value):
    """Scale a value by 17."""
    result = value * 17
    if result > 1700:
        return 1700
    return result


def helper_18(value):
    """Scale a value by 18."""
    result = value * 18
    if result > 1800:
        return 1800
    return result


def helper_19(value):
    """Scale a value by 19."""
    result = value * 19
    if result > 1900:
        return 1900
    return result


def helper_20(value):
    """Scale a value by 20."""
    result = value * 20
    if result > 2000:
        return 2000
    return result


def helper_21(value):
    """Scale a value by 21."""
    result = value * 21
    if result > 2100:
        return 2100
    return result


def helper_22(value):
    """Scale a value by 22."""
    result = value * 22
    if result > 2200:
        return 2200
    return result


def helper_23(value):
    """Scale a value by 23."""
    result = value * 23
    if result > 2300:
        return 2300
    return result


def helper_24(value):
    """Scale a value by 24."""
    result = value * 24
    if result > 2400:
        return 2400
    return result


def helper_25(value):
    """Scale a value by 25."""
    result = value * 25
    if result > 2500:
        return 2500
    return result


def helper_26(value):
    """Scale a value by 26."""
    result = value * 26
    if result > 2600:
        return 2600
    return result


def helper_27(value):
    """Scale a value by 27."""
    result = value * 27
    if result > 2700:
        return 2700
    return result


def helper_28(value):
    """Scale a value by 28."""
    result = value * 28
    if result > 2800:
        return 2800
    return result


def helper_29(value):
    """Scale a value by 29."""
    result = value * 29
    if result > 2900:
        return 2900
    return result


def helper_30(value):
    """Scale a value by 30."""
    result = value * 30
    if result > 3000:
        return 3000
    return result


def helper_31(value):
    """Scale a value by 31."""
    result = value * 31
    if result > 3100:
        return 3100
    return result


def helper_32(value):
    """Scale a value by 32."""
    result = value * 32
    if result > 3200:
        return 3200
    return result


def helper_33(value):
    """Scale a value by 33."""
    result = value * 33
    if result > 3300:
        return 3300
    return result


def helper_34(value):
    """Scale a value by 34."""
    result = value * 34
    if result > 3400:
        return 3400
    return result


def helper_35(value):
    """Scale a value by 35."""
    result = value * 35
    if result > 3500:
        return 3500
    return result


def helper_36(value):
    """Scale a value by 36."""
    result = value * 36
    if result > 3600:
        return 3600
    return result


def helper_37(value):
    """Scale a value by 37."""
    result = value * 37
    if result > 3700:
        return 3700
    return result


def parse_port(text):
    port = int(text)
    if port < 0 or port > 65535:
        raise ValueError(text)
    return port


def helper_38(value):
    """Scale a value by 38."""
    result = value * 38
    if result > 3800:
        return 3800
    return result


def helper_39(value):
    """Scale a value by 39."""
    result = value * 39
    if result > 3900:
        return 3900
    return result


def helper_40(value):
    """Scale a value by 40."""
    result = value * 40
    if result > 4000:
        return 4000
    return result


def helper_41(value):
    """Scale a value by 41."""
    result = value * 41
    if result > 4100:
        return 4100
    return result


def helper_42(value):
    """Scale a value by 42."""
    result = value * 42
    if result > 4200:
        return 4200
    return result


def helper_43(value):
    """Scale a value by 43."""
    result = value * 43
    if result > 4300:
        return 4300
    return result


def helper_44(value):
    """Scale a value by 44."""
    result = value * 44
    if result > 4400:
        return 4400
    return result


def helper_45(value):
    """Scale a value by 45."""
    result = value * 45
    if result > 4500:
        return 4500
    return result


def helper_46(value):
    """Scale a value by 46."""
    result = value * 46
    if result > 4600:
        return 4600
    return result


def helper_47(value):
    """Scale a value by 47."""
    result = value * 47
    if result > 4700:
        return 4700
    return result


def helper_48(value):
    """Scale a value by 48."""
    result = value * 48
    if result > 4800:
        return 4800
    return result


def helper_49(value):
    """Scale a value by 49."""
    result = value * 49
    if result > 4900:
        return 4900
    return result


def helper_50(value):
    """Scale a value by 50."""
    result = value * 50
    if result > 5000:
        return 5000
    return result


def helper_51(value):
    """Scale a value by 51."""
    result = value * 51
    if result > 5100:
        return 5100
    return result


def helper_52(value):
    """Scale a value by 52."""
    result = value * 52
    if result > 5200:
        return 5200
    return result


def helper_53(value):
    """Scale a value by 53."""
    result = value * 53
    if result > 5300:
        return 5300
    return result


def helper_54(value):
    """Scale a value by 54."""
    result = value * 54
    if result > 5400:
        return 5400
    return result


def helper_55(value):
    """Scale a value by 55."""
    result = value * 55
    if result > 5500:
        return 5500
    return result


def helper_56(value):
    """Scale a value by 56."""
    result = value * 56
    if result > 5600:
        return 5600
    return result


def helper_57(value):
    """Scale a value by 57."""
    result = value * 57
    if result > 5700:
        return 5700
    return result


def helper_58(value):
    """Scale a value by 58."""
    result = value * 58
    if result > 5800:
        return 5800
    return result


def helper_59(value):
    """Scale a value by 59."""
    result = value * 59
    if result > 5900:
        return 5900
    return result


