"""The class in the room on the page: the /class_* endpoints and the plain follow route (service.py, route.py,
no Gradio), the lecturer's and the students' panels (page.py). The class's state lives in classroom/."""
