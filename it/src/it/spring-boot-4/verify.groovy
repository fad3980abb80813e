def log = new File(basedir, 'build.log').text
assert log.contains('SPRING BOOT 4 OK') : 'the Boot 4 application test did not finish'
assert log.contains('Tests run: 5, Failures: 0, Errors: 0, Skipped: 0') : 'not all 5 Boot 4 tests passed'
true
